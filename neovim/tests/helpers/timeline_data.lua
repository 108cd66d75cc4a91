-- Synthetic `verbatim/timeline` results, shaped as docs/protocol.md documents
-- them, for the timeline's size tests and its benchmark (bench/timeline.lua).

local M = {}

--- What the server answers with `maxEdits = max` (docs/protocol.md) instead
--- of `result`: the newest `max` edits; the turn being filled when the bound
--- is reached keeps the edits it got (its `editCount` says how many it has
--- in all), older turns and sessions are left out, `edits` counts them all.
--- Changes `result` and returns it.
---@param result verbatim.TimelineResult every edit, newest first
---@param max integer|nil nil: no bound
---@return verbatim.TimelineResult
function M.cut(result, max)
  local total, kept, sessions = 0, 0, {}
  for _, session in ipairs(result.sessions) do
    local turns = {}
    for _, turn in ipairs(session.turns) do
      turn.editCount = #turn.edits
      total = total + #turn.edits
      if not max or kept < max then
        local room = max and math.min(#turn.edits, max - kept) or #turn.edits
        turn.edits = { unpack(turn.edits, 1, room) }
        kept = kept + room
        table.insert(turns, turn)
      end
    end
    if #turns > 0 then
      session.turns = turns
      table.insert(sessions, session)
    end
  end
  result.sessions, result.edits = sessions, total
  result.truncated = result.truncated == true or kept < total
  return result
end

--- A result of `n` edits of one file each, newest first: sessions of 5
--- turns of 10 edits (10,000 entries make 200 sessions, the server's default
--- limit), four agents in turn, and some edits rejected, partial, reverted
--- or not revertible, some files reviewed; with `max_edits`, as the server
--- answers `maxEdits = max_edits` (M.cut).
---@param n integer
---@param max_edits? integer
---@return verbatim.TimelineResult
function M.result(n, max_edits)
  local agents = { "claude-code", "codex", "gemini-cli", "verbatim-cli" }
  local sessions, made = {}, 0
  local s = 0
  while made < n do
    s = s + 1
    local agent = agents[(s % #agents) + 1]
    local turns = {}
    for t = 1, 5 do
      local edits, files = {}, {}
      for _ = 1, 10 do
        if made >= n then
          break
        end
        made = made + 1
        local write_id = string.format("18c3%08x-41233-%d", s * 1000 + t, made)
        local uri = string.format("file:///p/src/module_%d/file_%d.rs", s % 37, made % 53)
        table.insert(edits, {
          writeId = write_id,
          time = string.format("2026-11-%02dT10:%02d:%02dZ", 1 + s % 28, made % 60, made % 60),
          agent = agent,
          summary = string.format("Rename the helper %d and update its callers", made),
          outcome = made % 7 == 0 and "rejected" or (made % 11 == 0 and "partial" or "applied"),
          revertedBy = made % 13 == 0 and ("18c4-41233-" .. made) or nil,
          files = {
            {
              id = write_id .. ".0",
              uri = uri,
              outcome = "applied",
              added = made % 17,
              removed = made % 5,
              revertible = made % 19 ~= 0,
              whyNot = made % 19 == 0 and "tooLarge" or nil,
            },
          },
        })
        table.insert(files, { uri = uri, reviewed = made % 3 == 0 })
      end
      if #edits > 0 then
        table.insert(turns, {
          turn = string.format("01a23bcb-%04d-%04d", s, t),
          started = "2026-11-30T10:00:00Z",
          ended = "2026-11-30T10:59:00Z",
          files = files,
          edits = edits,
        })
      end
    end
    table.insert(sessions, {
      session = string.format("0b5e%04d-77aa-4c1d-9e2f-0123456789ab", s),
      agent = agent,
      source = "editor",
      started = "2026-11-30T10:00:00Z",
      ended = "2026-11-30T10:59:00Z",
      turns = turns,
    })
  end
  return M.cut({ sessions = sessions, entries = made, truncated = false }, max_edits)
end

return M
