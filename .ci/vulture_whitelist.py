"""Names vulture (dead-code check, .ci/run) reports that a signature we do not own requires. Never imported or run."""

section_title  # birdcritic/scorer.py execute_queries: the official BIRD-CRITIC test-case helper's signature
run_manager  # integrations/langchain_tools.py: LangChain's BaseTool._run passes it
