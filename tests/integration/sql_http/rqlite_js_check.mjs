// rqlite's JavaScript client (rqlite-js, unchanged from npm) against vscluster's director:
//   node rqlite_js_check.mjs http://127.0.0.1:PORT REPLICA_PID
// Creates a table, inserts with parameters in a transaction, checks that a failing statement
// in a transaction applied nothing, reads at every consistency level, binds a 1 MiB blob, and
// reads its own write at level none after a replica is killed. Exits non-zero on any mismatch.
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(process.cwd() + '/')
const { DataApiClient } = require('rqlite-js')

const [url, replicaPid] = process.argv.slice(2)
const client = new DataApiClient(url)

function ok (results, what) {
  if (results.hasError()) {
    throw new Error(`${what}: ${JSON.stringify(results.getFirstError().toObject())}`)
  }
  return results
}

async function main () {
  ok(await client.execute('CREATE TABLE foo (id INTEGER PRIMARY KEY, name TEXT, b BLOB)'), 'create')
  const ins = ok(await client.execute([
    ['INSERT INTO foo(name) VALUES(?)', 'fiona'],
    ['INSERT INTO foo(name) VALUES(:name)', { name: 'sinead' }]
  ], { transaction: true }), 'insert')
  assert.equal(ins.get(0).getLastInsertId(), 1)
  assert.equal(ins.get(1).getLastInsertId(), 2)
  assert.equal(ins.get(1).getRowsAffected(), 1)
  console.log('parameterized inserts in a transaction: ok')

  const bad = await client.execute([
    ['INSERT INTO foo(id, name) VALUES(?, ?)', 10, 'x'],
    ['INSERT INTO foo(id, name) VALUES(?, ?)', 1, 'duplicate id']
  ], { transaction: true })
  assert.ok(bad.hasError(), 'a failing statement in a transaction is reported')
  const count = ok(await client.query('SELECT COUNT(*) AS n FROM foo', { level: 'strong' }), 'count')
  assert.equal(count.get(0).get('n'), 2, 'nothing of the failed transaction was applied')
  console.log('failing transaction applied nothing: ok')

  for (const level of ['none', 'weak', 'strong']) {
    const r = ok(await client.query('SELECT id, name FROM foo ORDER BY id', { level }), level)
    assert.deepEqual(r.toArray(), [{ id: 1, name: 'fiona' }, { id: 2, name: 'sinead' }], level)
    const many = ok(await client.query(['SELECT name FROM foo WHERE id = 1',
      'SELECT name FROM foo WHERE id = 2'], { level }), level)
    assert.equal(many.get(0).get('name'), 'fiona')
    assert.equal(many.get(1).get('name'), 'sinead')
  }
  console.log('queries at none, weak, strong: ok')

  const blob = Buffer.alloc(1024 * 1024)
  for (let i = 0; i < blob.length; i++) blob[i] = (i * 7) & 255
  ok(await client.execute([['INSERT INTO foo(id, name, b) VALUES(?, ?, ?)', 3, 'blob',
    "x'" + blob.toString('hex') + "'"]]), 'blob insert')
  const back = ok(await client.query('SELECT b FROM foo WHERE id = 3'), 'blob read')
  assert.ok(Buffer.from(back.get(0).get('b'), 'base64').equals(blob), 'the blob comes back whole')
  console.log(`blob parameter of ${blob.length} bytes: ok`)

  process.kill(Number(replicaPid), 'SIGKILL')
  const raw = await client.execute([['INSERT INTO foo(id, name) VALUES(?, ?)', 4, 'after kill']],
    { raw: true })
  assert.equal(raw.status, 200)
  assert.ok(!raw.body.results[0].error, JSON.stringify(raw.body))
  const seq = raw.body.seq
  assert.ok(seq > 0, 'the write carries its seq')
  const mine = await client.query(`SELECT name FROM foo WHERE id = 4`, { level: 'none', raw: true })
  assert.equal(mine.status, 200)
  // level=none with the write's seq (min_seq, an extension) must see the write.
  const own = await fetch(`${url}/db/query?level=none&min_seq=${seq}&q=` +
    encodeURIComponent('SELECT name FROM foo WHERE id = 4'))
  const body = await own.json()
  assert.deepEqual(body.results[0].values, [['after kill']], JSON.stringify(body))
  console.log('read-your-writes across a replica kill: ok')
}

main().then(() => console.log('rqlite-js: all ok'), (e) => {
  console.error('rqlite-js check failed:', e)
  process.exit(1)
})
