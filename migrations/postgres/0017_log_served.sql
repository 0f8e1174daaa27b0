-- The verifiable log's served size, as in sqlite 0021 (see there): the
-- size of the checkpoint served once witnesses cosigned it, which only
-- grows; 0 while none was served.
ALTER TABLE log_state ADD COLUMN served_size BIGINT NOT NULL DEFAULT 0;
