"""A scripted model API for the tests: the Anthropic Messages, OpenAI Responses and Gemini
APIs, streamed as the real agent CLIs expect, with each test's answers set in advance."""
