import { describe, expect, it } from 'vitest';
import { protectionPatch } from '../src/cli/targets-command.js';
import { applySettingsPatch, DEFAULT_TARGET_SETTINGS, PROTECTIONS_OFF } from '../src/protection/target-settings.js';

describe('retryd targets set --protection', () => {
  it('off turns a target to exactly PROTECTIONS_OFF, and on back to the defaults', () => {
    const off = applySettingsPatch(DEFAULT_TARGET_SETTINGS, protectionPatch(false));
    expect(off).toEqual({ ok: true, settings: PROTECTIONS_OFF });
    const on = applySettingsPatch(PROTECTIONS_OFF, protectionPatch(true));
    expect(on).toEqual({ ok: true, settings: DEFAULT_TARGET_SETTINGS });
  });
});
