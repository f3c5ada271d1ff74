-- :sessions sessions of :per_session queued downloads each, in 30 groups, on 50 hosts.
INSERT INTO haul.session (id, createdAt, settings)
SELECT 's' || s, 0, '{"maxConcurrentDownloads":' || :limit || ',"maxDownloadsPerHost":' || :per_host || ',"groupOrder":"interleaved"}'
FROM generate_series(1, :sessions) s;
INSERT INTO haul.downloadGroup (session, name, createdAt)
SELECT 's' || s, 'g' || g, 0 FROM generate_series(1, :sessions) s, generate_series(1, 30) g;
INSERT INTO haul.download (id, session, groupName, position, priority, state, url)
SELECT s::bigint * 100000000 + n, 's' || s, 'g' || (n % 30 + 1), n, 0, 'queued',
       'https://h' || (n % 50) || '.example/shard/' || n
FROM generate_series(1, :sessions) s, generate_series(1, :per_session) n;
VACUUM ANALYZE;
