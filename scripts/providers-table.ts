/** Writes docs/providers.md from the catalog (core/providers/catalog.ts). Run: npx tsx scripts/providers-table.ts */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { providersMarkdown } from '../core/providers/table';

const target = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'providers.md');
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, providersMarkdown());
console.log(`wrote ${target}`);
