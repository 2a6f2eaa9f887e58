import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

// The report's W1-over-gRPC step (`w1grpc`): how it is planned and how its figures are read beside W1 over HTTP. The
// step itself (w1.mjs --downstream grpc) is smoke-run by hand: its figures are measured on a quiet machine.

const ROOT = join(import.meta.dirname, '..', '..', '..');
const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(join(ROOT, 'bench', 'report', file)).href)) as T;

interface Step {
  workload: string;
  script?: string;
  store: string;
  args: string[];
}
type PlanModule = { planRuns: (options: { quick: boolean; stores?: string[]; peers?: string[]; workloads?: string[] }) => Step[] };
type FiguresModule = { w1GrpcFigures: (results: unknown) => { rows: { store: string; attemptsPerSec: number; pass: boolean; http?: { attempts?: number; cpu?: number } }[] } };

describe('W1 over gRPC in the benchmark report', () => {
  it('plans one w1.mjs --downstream grpc step of retryd alone on every store, after W1', async () => {
    const { planRuns } = await load<PlanModule>('plan.mjs');
    const steps = planRuns({ quick: true, stores: ['sqlite', 'redis'], peers: [], workloads: ['w1', 'w1grpc'] });
    expect(steps.map((s) => s.workload)).toEqual(['w1', 'w1grpc']);
    expect(steps[1]).toMatchObject({
      script: 'w1',
      store: 'sqlite,redis',
      args: ['--downstream', 'grpc', '--store', 'sqlite,redis', '--only', 'retryd', '--protection', 'defaults', '--tasks', '300', '--rounds', '1'],
    });
    expect(planRuns({ quick: false, stores: [], workloads: ['w1grpc'] })).toEqual([]);
  });

  it('reads each store beside the same store over HTTP', async () => {
    const { w1GrpcFigures } = await load<FiguresModule>('figures.mjs');
    const row = (id: string, attemptsPerSec: number, cpuMsPerAttempt: number) => ({ id, protection: 'defaults', attemptsPerSec, cpuMsPerAttempt, pass: true });
    const results = {
      runs: [
        { workload: 'w1', store: 'sqlite', data: { tasks: 300, results: [row('retryd-sqlite-full', 2_000, 0.4)] } },
        { workload: 'w1grpc', script: 'w1', store: 'sqlite', data: { tasks: 300, rounds: 1, results: [row('retryd-sqlite-full-grpc', 1_500, 0.5)] } },
      ],
    };
    const [sqlite] = w1GrpcFigures(results).rows;
    expect(sqlite).toMatchObject({ store: 'sqlite', attemptsPerSec: 1_500, pass: true, http: { attempts: 0.75, cpu: 1.25 } });
  });
});
