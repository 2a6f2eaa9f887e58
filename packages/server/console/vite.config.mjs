// The web console `retryd serve` serves at `/`: built by `npm run build` into the server package's dist/console/,
// served from disk by src/api/routes/console-routes.ts (the page at `/`, its files under `/console/assets/`).
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  // Preact's JSX through esbuild: no framework plugin needed.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: fileURLToPath(new URL('../dist/console/', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // The page must not load anything inline (the service sends a CSP without 'unsafe-inline').
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  logLevel: 'warn',
});
