// Builds the console (web/) into dist/console, served by the service at /app (src/public/console.routes.ts).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/app/',
  plugins: [svelte()],
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    // Hashed names under assets/: the server sends them with a year-long immutable cache.
    assetsDir: 'assets',
    // Never inline assets as data: URLs; every file is a plain same-origin request the CSP allows.
    assetsInlineLimit: 0,
    reportCompressedSize: true,
  },
});
