-- Gives each of :daemons daemons :held leases in session s1 (the renewal bench's state).
UPDATE haul.download d SET leaseOwner = 'd' || ((n.rn - 1) % :daemons), leaseUntil = now() + interval '1 hour',
    leaseEpoch = leaseEpoch + 1
FROM (SELECT id, row_number() OVER (ORDER BY position) AS rn FROM haul.download WHERE session = 's1'
      ORDER BY position LIMIT :daemons * :held) n
WHERE d.id = n.id;
