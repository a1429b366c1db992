-- API key life cycle (issue 14): a key can be revoked, and an operator names it by its prefix.

-- When the key was revoked; null while it is live. A revoked row is kept, not deleted, so
-- `keys list` still shows when it was made and when it was revoked, and the bearer check can
-- tell a caller "revoked" rather than "unknown".
alter table api_keys add column revoked_at timestamptz;
alter table api_keys add constraint api_keys_revoked_after_created check (revoked_at is null or revoked_at >= created_at);

-- `keys revoke --prefix opk_xxxxxx` must name exactly one key. The prefix is 36 random bits,
-- so a collision is rare; createApiKey draws a new key when one happens.
alter table api_keys add constraint api_keys_key_prefix_key unique (key_prefix);
