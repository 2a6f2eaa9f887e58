import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import express4 from 'express4';
import { describe } from 'vitest';
import { retrydExpress } from '../src/express/index.js';
import { CHECKOUT_HEADERS, handoffScenario } from './handoff-scenario.js';

type AsyncHandler = (req: Request, res: Response) => Promise<void>;

// The peer range is `^4.21.0 || ^5.0.0`: the same scenario on each major. Express 5 hands a rejected promise of an
// async handler to the error handlers by itself; Express 4 does not, so there the handler passes it on with `next`.
describe.each([
  ['Express 5', express, (handler: AsyncHandler) => handler],
  ['Express 4', express4, (handler: AsyncHandler) => (req: Request, res: Response, next: NextFunction) => void handler(req, res).catch(next)],
])('@retryd/client/express with %s', (_name, express, route) => {
  handoffScenario(async (options, downstream) => {
    const retryd = retrydExpress(options);
    const app = express();
    app.use(express.json());
    app.use(retryd.middleware);
    app.post(
      '/checkout',
      route(async (req, res) => {
        const answer = await req.retryd.fetch(`${downstream}${String(req.query.path)}`, {
          method: 'POST',
          headers: CHECKOUT_HEADERS,
          body: JSON.stringify(req.body),
        });
        res.status(answer.status).json(await answer.json());
      }),
    );
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
