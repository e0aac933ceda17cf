// node-pty (shell-runtime) builds from source with node-gyp, which otherwise downloads Node's
// headers. Node installs usually ship them under <prefix>/include/node; when they are there,
// point node-gyp at them so installs work offline. An explicit npm_config_nodedir wins.
const { existsSync } = require('node:fs')
const { dirname, join } = require('node:path')

const prefix = dirname(dirname(process.execPath))

module.exports = {
  hooks: {
    updateConfig(config) {
      if (process.env.npm_config_nodedir || !existsSync(join(prefix, 'include', 'node', 'node.h'))) return config
      config.extraEnv = { ...config.extraEnv, npm_config_nodedir: prefix }
      return config
    },
  },
}
