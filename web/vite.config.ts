import { fileURLToPath, URL } from 'node:url';

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

/** The Rust server during development (`tollgate --listen 127.0.0.1:3000`). */
const serverTarget = 'http://127.0.0.1:3000';

export default defineConfig({
  plugins: [react()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  server: {
    proxy: {
      '/api': serverTarget,
      '/v1': serverTarget,
      '/pg': serverTarget,
    },
  },
  build: {
    outDir: 'dist',
    rolldownOptions: {
      output: {
        // React and the router change rarely: a chunk of their own stays cached across releases.
        codeSplitting: {
          groups: [
            {
              name: 'react',
              test: /node_modules[\\/](react|react-dom|react-router|scheduler)[\\/]/,
            },
          ],
        },
      },
    },
  },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['./src/test/setup.ts'],
    restoreMocks: true,
    // CI is 2 shared cores: multi-step page tests can take several seconds there.
    testTimeout: 30_000,
  },
});
