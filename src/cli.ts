import { parseArgs } from 'node:util';
import { loadConfig } from './config.js';
import { createDb } from './db/index.js';
import { migrateToLatest } from './db/migrate.js';
import { createAccount, rotateAccountKeys } from './modules/accounts/accounts.service.js';

/** `accounts:create --name X`, `accounts:rotate --user-id N`, `migrate`. Honours DATABASE_URL. */
async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({ args: rest, options: { name: { type: 'string' }, 'user-id': { type: 'string' } }, strict: true });
  const config = loadConfig();
  const database = createDb(config.databaseUrl);
  try {
    await migrateToLatest(database.db);
    switch (command) {
      case 'migrate':
        console.log(JSON.stringify({ migrated: true }));
        return 0;
      case 'accounts:create': {
        if (!values.name) return fail('accounts:create needs --name "Account name"');
        console.log(JSON.stringify(await createAccount(database.db, values.name)));
        return 0;
      }
      case 'accounts:rotate': {
        const id = Number(values['user-id']);
        if (!Number.isInteger(id) || id < 1) return fail('accounts:rotate needs --user-id N');
        const keys = await rotateAccountKeys(database.db, id);
        if (!keys) return fail(`no account with id ${id}`);
        console.log(JSON.stringify(keys));
        return 0;
      }
      default:
        return fail('usage: cli.ts accounts:create --name X | accounts:rotate --user-id N | migrate');
    }
  } finally {
    await database.close();
  }
}

function fail(message: string): number {
  console.error(message);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
