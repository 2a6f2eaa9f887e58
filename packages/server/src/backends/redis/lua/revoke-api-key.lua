--[[
  revoke-api-key: revokes an API key for good. The first revocation time stays (HSETNX): a second revoke changes
  nothing and answers the key as it is.

  KEYS[1] apiKey       hash   the key's fields (API_KEY_FIELDS in access-store.ts)
  KEYS[2] activeKeys   set    the ids of the keys not revoked

  ARGV[1] keyId
  ARGV[2] now          epoch ms
  ARGV[3] tenant       '' for any tenant, else '=' followed by the tenant the key must belong to

  Returns the key's hash after (HGETALL), or nil for no such key or another tenant's. Errors: none.
]]

local tenant = redis.call('HGET', KEYS[1], 'tenantId')
if not tenant then return false end
if ARGV[3] ~= '' and ARGV[3] ~= '=' .. tenant then return false end
if redis.call('HSETNX', KEYS[1], 'revokedAt', ARGV[2]) == 1 then redis.call('SREM', KEYS[2], ARGV[1]) end
return redis.call('HGETALL', KEYS[1])
