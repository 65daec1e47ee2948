import { defineConfig } from 'vite';

// No inline scripts or styles: the component serves a strict Content-Security-Policy.
export default defineConfig({
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    assetsDir: 'assets',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
    reportCompressedSize: false,
  },
  server: { proxy: { '^/(health|chat|conversations|actions|documents|search|tools)': 'http://127.0.0.1:3000' } },
});
