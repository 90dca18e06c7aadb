-- Schema version 7: code contexts. An execution run in a context names it (context_id); its
-- final expression's value (result_json, {"text/plain": ...}) and an uncaught exception's
-- traceback (error_traceback) are kept with it. The contexts themselves live in the data dir
-- (contexts/<id>/context.json), held by the sandbox shim like any tree.

ALTER TABLE executions ADD COLUMN context_id TEXT;
ALTER TABLE executions ADD COLUMN result_json TEXT;
ALTER TABLE executions ADD COLUMN error_traceback TEXT;
