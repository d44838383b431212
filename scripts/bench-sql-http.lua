-- wrk body script of scripts/bench-sql-http. `-- execute`: POST /db/execute, one parameterized
-- INSERT per request (the statement `vsc bench write --op insert` sends to the native write
-- port). `-- query MAX_ID`: GET /db/query?q=SELECT ... WHERE id = <random 1..MAX_ID> (level weak,
-- the default). done() prints the requests, the answers that failed (non-200, or an "error" in
-- a result) and wrk's measured seconds.
local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

errors = 0  -- a global: done() reads it from each thread
local mode, max_id, n = "execute", 1000, 0
function init(args)
  mode = args[1] or "execute"
  if args[2] then max_id = tonumber(args[2]) end
  n = math.random(1, 1000000000)
  if mode == "execute" then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "application/json"
  end
end

function request()
  if mode == "query" then
    return wrk.format("GET", "/db/query?q=SELECT%20node%2C%20size%20FROM%20resources%20WHERE%20id%3D"
                      .. math.random(1, max_id))
  end
  n = n + 1
  local body = string.format(
    '[["INSERT INTO resources(node, size, updated_at) VALUES(?, ?, ?)", "http-%d", %d, %d]]',
    n, n % 65536, n)
  return wrk.format("POST", "/db/execute", nil, body)
end

function response(status, headers, body)
  if status ~= 200 or string.find(body, '"error"', 1, true) then errors = errors + 1 end
end

function done(summary, latency, requests)
  local e = 0
  for _, t in ipairs(threads) do e = e + t:get("errors") end
  io.write(string.format("vsc-requests %d\nvsc-errors %d\nvsc-seconds %.3f\n", summary.requests, e,
                         summary.duration / 1e6))
end
