--[[
  put-policy: registers a named policy (create) or changes one (replace).

  KEYS[1] policy     hash   the policy: policy (JSON), callback (JSON, when it has one), created, updated, version
  KEYS[2] policies   zset   policy ids, all scored 0 (listed in id order)

  ARGV[1] mode       'create' or 'replace'
  ARGV[2] policyId
  ARGV[3] policy     the policy as JSON
  ARGV[4] created    epoch ms (create only: replace keeps the stored one)
  ARGV[5] updated    epoch ms
  ARGV[6] version    the version to create with (replace raises the stored one)
  ARGV[7] callback   the policy's callback as JSON, or '' for none (its hash field `callback`, absent for none)

  Returns { 'created' }, { 'exists', HGETALL } (create of a taken id), { 'replaced', HGETALL } or
  { 'not_found' } (replace of an unknown id). Errors: none.
]]

local exists = redis.call('EXISTS', KEYS[1]) == 1
if ARGV[1] == 'create' then
  if exists then return { 'exists', redis.call('HGETALL', KEYS[1]) } end
  redis.call('HSET', KEYS[1], 'policy', ARGV[3], 'created', ARGV[4], 'updated', ARGV[5], 'version', ARGV[6])
  if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'callback', ARGV[7]) end
  redis.call('ZADD', KEYS[2], 0, ARGV[2])
  return { 'created' }
end
if not exists then return { 'not_found' } end
redis.call('HSET', KEYS[1], 'policy', ARGV[3], 'updated', ARGV[5])
if ARGV[7] == '' then redis.call('HDEL', KEYS[1], 'callback') else redis.call('HSET', KEYS[1], 'callback', ARGV[7]) end
redis.call('HINCRBY', KEYS[1], 'version', 1)
return { 'replaced', redis.call('HGETALL', KEYS[1]) }
