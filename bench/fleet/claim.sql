-- One daemon's cycle against one session, as PostgresLeases runs it: a claim of up to 4
-- downloads (advisory lock, settings, live leases per host, the SKIP LOCKED scan, the lease
-- update), then the completion of the 4 it has held longest (fenced row lock, state, release).
-- pgbench: -D sessions=N; each client is one daemon ("d<client_id>") on a random session.
\set s random(1, :sessions)
BEGIN;
SELECT pg_advisory_xact_lock(1279607123, hashtext('s' || :s));
SELECT settings FROM haul.session WHERE id = 's' || :s;
SELECT host, count(*) FROM haul.download
 WHERE session = 's' || :s AND leaseOwner IS NOT NULL AND leaseUntil > now() GROUP BY host;
WITH candidate AS (
    SELECT id FROM haul.download
    WHERE session = 's' || :s AND state IN ('queued', 'running') AND (leaseOwner IS NULL OR leaseUntil <= now())
      AND host <> ALL('{}'::text[])
    ORDER BY priority DESC, position, id LIMIT 16 FOR UPDATE SKIP LOCKED)
UPDATE haul.download d SET leaseOwner = 'd' || :client_id, leaseUntil = now() + interval '30 seconds',
    leaseEpoch = leaseEpoch + 1
FROM (SELECT id FROM candidate LIMIT 4) c WHERE d.id = c.id;
COMMIT;
BEGIN;
WITH held AS (
    SELECT id FROM haul.download WHERE leaseOwner = 'd' || :client_id ORDER BY leaseUntil, id LIMIT 4 FOR UPDATE)
UPDATE haul.download d SET state = 'completed', durableOffset = 1048576, updatedAt = 1,
    leaseOwner = NULL, leaseUntil = NULL
FROM held WHERE d.id = held.id;
COMMIT;
