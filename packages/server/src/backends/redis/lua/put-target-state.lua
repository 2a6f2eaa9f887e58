--[[
  put-target-state: writes one per-target state (breaker, rate limit, ...) over the version the caller read.

  KEYS[1] target   hash   value, version, updated

  ARGV[1] expected   the version read; 0 means "absent"
  ARGV[2] value      opaque JSON
  ARGV[3] now        epoch ms

  Returns 1 when written (version becomes expected + 1), 0 when the stored version is another (a lost race).
  Errors: none.
]]

local stored = redis.call('HGET', KEYS[1], 'version')
local expected = tonumber(ARGV[1])
if (expected == 0 and stored) or (expected ~= 0 and tonumber(stored) ~= expected) then return 0 end
redis.call('HSET', KEYS[1], 'value', ARGV[2], 'updated', ARGV[3])
redis.call('HINCRBY', KEYS[1], 'version', 1)
return 1
