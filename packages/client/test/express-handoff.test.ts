import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe } from 'vitest';
import { retrydExpress } from '../src/express/index.js';
import { CHECKOUT_HEADERS, handoffScenario } from './handoff-scenario.js';

describe('@retryd/client/express with Express 5', () => {
  handoffScenario(async (options, downstream) => {
    const retryd = retrydExpress(options);
    const app = express();
    app.use(express.json());
    app.use(retryd.middleware);
    app.post('/checkout', async (req, res) => {
      const answer = await req.retryd.fetch(`${downstream}${String(req.query.path)}`, {
        method: 'POST',
        headers: CHECKOUT_HEADERS,
        body: JSON.stringify(req.body),
      });
      res.status(answer.status).json(await answer.json());
    });
    app.use(retryd.errorHandler);
    const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  });
});
