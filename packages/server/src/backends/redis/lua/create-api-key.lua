--[[
  create-api-key: stores a new API key unless its id is taken, with its place in the listings and, when it is active,
  in the set of active keys, all at once (two concurrent creates of one id: the second finds the first's hash).

  KEYS[1] apiKey       hash   the key's fields (API_KEY_FIELDS in access-store.ts)
  KEYS[2] apiKeys      zset   every key id, all scored 0 (listed in id order)
  KEYS[3] tenantKeys   zset   the key's tenant's key ids, all scored 0
  KEYS[4] activeKeys   set    the ids of the keys not revoked

  ARGV[1] keyId
  ARGV[2] active       '1' when the key is not revoked, '0' when it is created revoked
  ARGV[3..] field, value, ...   the hash's fields (a null one left out)

  Returns 1 when created, 0 when the id was taken (nothing written). Errors: none.
]]

if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], 0, ARGV[1])
redis.call('ZADD', KEYS[3], 0, ARGV[1])
if ARGV[2] == '1' then redis.call('SADD', KEYS[4], ARGV[1]) end
return 1
