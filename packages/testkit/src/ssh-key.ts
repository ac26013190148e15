import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './run.js';
import { tempDir } from './temp-dir.js';

export interface SshKeyPair {
  /** Path of the private key file (mode 0600, no passphrase): what `ssh -i` takes. */
  privateKey: string;
  /** Contents of the private key file (OpenSSH format), for in-process clients. */
  privateKeyText: string;
  /** The public key line, `ssh-ed25519 AAAA… comment`, as authorized_keys wants it. */
  publicKey: string;
  /** Path of the `.pub` file next to the private key. */
  publicKeyPath: string;
  /** Folder holding both files; owned by the caller when it passed `dir`. */
  dir: string;
  /** Removes `dir` if generateSshKey created it; leaves a caller's folder alone. */
  cleanup(): Promise<void>;
}

export interface GenerateSshKeyOptions {
  /** Folder to write `<name>` and `<name>.pub` into; a fresh temp folder by default. */
  dir?: string;
  /** File name of the private key; `id_ed25519` by default. */
  name?: string;
  /** Key comment; `testkit` by default. */
  comment?: string;
}

/** A fresh ed25519 key pair made by ssh-keygen, so clients and sshd read it like any real key. */
export async function generateSshKey(options: GenerateSshKeyOptions = {}): Promise<SshKeyPair> {
  const owned = options.dir === undefined ? await tempDir('testkit-key-') : undefined;
  const dir = options.dir ?? owned!.path;
  const privateKey = join(dir, options.name ?? 'id_ed25519');
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', options.comment ?? 'testkit', '-f', privateKey]);
  const [privateKeyText, publicKeyFile] = await Promise.all([
    readFile(privateKey, 'utf8'),
    readFile(`${privateKey}.pub`, 'utf8'),
  ]);
  return {
    privateKey,
    privateKeyText,
    publicKey: publicKeyFile.trim(),
    publicKeyPath: `${privateKey}.pub`,
    dir,
    cleanup: async () => {
      await owned?.cleanup();
    },
  };
}
