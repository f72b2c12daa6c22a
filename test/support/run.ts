import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

/** The project folder: commands of the process tests run there. */
export const ROOT = resolve(import.meta.dirname, '../..');

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command in the project folder with extra environment, collecting its output. */
export function run(cmd: string, args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}
