import { setFlagsFromString } from 'node:v8';

// Imported first by the CLI's entry, so that it runs before the service allocates anything.
//
// V8's allocation-site pretenuring is off. V8 counts, per allocation site, how many of its objects outlive a scavenge.
// A site where nearly all do is then allocated straight into the old generation. Under retryd's load that decision
// was taken for sites whose objects live a few ms longer than a scavenge. They then died in the old generation, and
// until the next mark-compact they kept the young objects they point to alive through every scavenge.
// W4 on Redis, same 16 s (`v8.GCProfiler`):
//   - survivors per scavenge: 955–1,108 KiB with pretenuring, 469–471 KiB without;
//   - promoted: 64–76 MB against 30;
//   - mark-compacts: 3–5 against 0–1.
// On one core, a mark-compact in a task's lag was the main cause of W4's tail (`w4.mjs --stalls`). Request and
// attempt objects live for milliseconds, so pretenuring has nothing to win here.
setFlagsFromString('--no-allocation-site-pretenuring');
