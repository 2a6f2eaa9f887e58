#!/usr/bin/env node
// The `retryd` command. It lives outside dist/ on purpose: npm links a workspace's bin when it installs, before the
// root `prepare` script builds dist/, and it leaves out a bin whose file does not exist yet, so `npx retryd` could
// not find the command after `npm ci` while the bin pointed into dist/.
await import('../dist/cli/main.js');
