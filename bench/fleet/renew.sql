-- One daemon's renewal of every lease it holds (PostgresLeases.renew: rows locked in ID
-- order, only unexpired ones extended). Run after claim-only.sql filled the leases.
BEGIN;
UPDATE haul.download d SET leaseUntil = now() + interval '30 seconds'
FROM (SELECT id FROM haul.download WHERE leaseOwner = 'd' || :client_id AND leaseUntil > now()
      ORDER BY id FOR UPDATE) held
WHERE d.id = held.id;
COMMIT;
