/**
 * The other names a hidden path has in the mount table: a second mount of its filesystem shows it
 * again, wherever the second mount's root lies above it; a name covered by another mount does not.
 */
import { describe, expect, it } from 'vitest'
import { mountAliases } from '../src/confine/mounts.ts'
import { readMounts } from '../src/tree/mountinfo.ts'

const table = (lines: string[]) => readMounts(`${lines.join('\n')}\n`)

describe('the names a hidden path has in the mount table', () => {
  it('finds a bind mount of the home, of the hidden folder itself, and of the whole filesystem', () => {
    const mounts = table([
      '27 1 254:0 / / rw,relatime - ext4 /dev/vda rw',
      '40 27 254:0 /root /mnt/home rw,relatime - ext4 /dev/vda rw',
      '41 27 254:0 /srv/secret /opt/s rw,relatime - ext4 /dev/vda rw',
      '42 27 254:0 / /media/disk rw,relatime - ext4 /dev/vda rw',
      '43 27 0:50 / /root/tmpfs rw - tmpfs tmpfs rw',
    ])
    expect(mountAliases(['/root/.npmrc'], mounts).sort()).toEqual(['/media/disk/root/.npmrc', '/mnt/home/.npmrc'])
    expect(mountAliases(['/srv/secret'], mounts).sort()).toEqual(['/media/disk/srv/secret', '/opt/s'])
    // Another filesystem mounted under the home is not the same files.
    expect(mountAliases(['/root/tmpfs/x'], mounts)).toEqual([])
  })

  it('leaves out a name another mount covers, and mounts of an unrelated part of the filesystem', () => {
    const mounts = table([
      '27 1 254:0 / / rw - ext4 /dev/vda rw',
      '40 27 254:0 /root /mnt/home rw - ext4 /dev/vda rw',
      '44 40 0:51 / /mnt/home/.ssh rw - tmpfs tmpfs rw',
      '45 27 254:0 /run/netns /run/netns rw - ext4 /dev/vda rw',
    ])
    expect(mountAliases(['/root/.ssh'], mounts)).toEqual([])
    expect(mountAliases(['/root/.aws'], mounts)).toEqual(['/mnt/home/.aws'])
  })

  it('reads escaped names and a hidden path that is itself the second mount', () => {
    const mounts = table(['27 1 8:1 / / rw - ext4 /dev/sda1 rw', '40 27 8:1 /home/a\\040b /mnt/x rw - ext4 /dev/sda1 rw'])
    expect(mountAliases(['/home/a b/.netrc'], mounts)).toEqual(['/mnt/x/.netrc'])
    expect(mountAliases(['/mnt/x/.netrc'], mounts)).toEqual(['/home/a b/.netrc'])
  })
})
