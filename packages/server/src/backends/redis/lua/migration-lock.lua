--[[
  migration-lock: renews or frees the layout migration's lock, only for the instance that holds it.

  KEYS[1] lock     string   the holder's token (set with SET NX PX by the holder)

  ARGV[1] token    the caller's token
  ARGV[2] ms       the new time to live in ms, or 0 to free the lock

  Returns 1 when the caller holds the lock (renewed or freed), 0 when it does not (it lapsed and another
  instance may hold it now). Errors: none.
]]

if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '0' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
