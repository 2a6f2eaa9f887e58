--[[
  settle-callbacks: forgets callbacks owed in one partition once the relay made them into tasks of their own.

  KEYS[1] callbacks  zset  ids of ended tasks whose callback is owed, by when they ended

  ARGV[1..]        pairs of task id, owed-at (the score the relay read, as Redis wrote it)

  An entry goes only while its score is still the one read: a task replayed and ended again since owes its new end,
  which stays for the relay's next look.

  Returns how many entries it removed.
  Errors: none.
]]
local removed = 0
for i = 1, #ARGV, 2 do
  local id, owed_at = ARGV[i], ARGV[i + 1]
  local score = redis.call('ZSCORE', KEYS[1], id)
  if score and tonumber(score) == tonumber(owed_at) then
    redis.call('ZREM', KEYS[1], id)
    removed = removed + 1
  end
end
return removed
