-- The verifiable log's served size (acme/transparency). Witnesses
-- (C2SP tlog-witness) cosign each new checkpoint; the cosigned checkpoint
-- replaces the one the sequencer stored, in log_checkpoints. served_size
-- is the size of the checkpoint the log serves: the latest one that
-- gathered the cosignatures required, which may lag log_state.size. It
-- only grows; 0 while none was served.
ALTER TABLE log_state ADD COLUMN served_size INTEGER NOT NULL DEFAULT 0;
