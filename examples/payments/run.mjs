// The payments demo: `node examples/payments/run.mjs --payments 10000` (after `npm run build`).
// Options: --payments, --worker-crashes, --service-crashes, --postgres-crashes, --seed. See README.md.
import './dist/demo/main.js';
