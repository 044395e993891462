"""The official `google-genai` Python SDK against Tollgate's Gemini routes, unchanged: a Gemini
channel (pass-through) and OpenAI and Claude channels (converted), whole and streamed, sync and
async, token counting, embeddings, and the SDK's exception classes for Tollgate's Gemini-shaped
errors."""

import asyncio

import pytest
from google import genai
from google.genai import errors, types

GEMINI = "gemini-2.5-flash"


def client(gateway, key=None):
    """A client to keep in a variable: a `genai.Client` closes its connections when collected."""
    base, good, _ = gateway
    return genai.Client(api_key=key or good,
                        http_options=types.HttpOptions(base_url=base, api_version="v1beta"))


@pytest.mark.parametrize("model", [GEMINI, "gpt-4o-mini", "claude-sonnet-4-20250514"])
def test_generate_content(gateway, model):
    c = client(gateway)
    answer = c.models.generate_content(model=model, contents="Hi")
    assert answer.text == "Hello"
    assert answer.candidates[0].finish_reason == types.FinishReason.STOP
    assert answer.usage_metadata.prompt_token_count == 5
    assert answer.usage_metadata.candidates_token_count == 2


@pytest.mark.parametrize("model", [GEMINI, "gpt-4o-mini", "claude-sonnet-4-20250514"])
def test_generate_content_stream(gateway, model):
    c = client(gateway)
    chunks = list(c.models.generate_content_stream(model=model, contents="Hi"))
    assert "".join(c.text or "" for c in chunks) == "Hello"
    assert chunks[-1].usage_metadata.candidates_token_count == 2


def test_async_generate_content(gateway):
    c = client(gateway)

    async def run():
        return await c.aio.models.generate_content(model=GEMINI, contents="Hi")

    assert asyncio.run(run()).text == "Hello"


def test_count_tokens(gateway):
    # A Gemini channel counts with Gemini's tokenizer (the mock says 9).
    c = client(gateway)
    assert c.models.count_tokens(model=GEMINI, contents="Hi").total_tokens == 9


def test_embed_content(gateway):
    c = client(gateway)
    answer = c.models.embed_content(model="gemini-embedding-001", contents="Hi")
    assert answer.embeddings[0].values == [0.1, 0.2, 0.3]


def test_errors_raise_the_sdk_exceptions(gateway):
    stranger = client(gateway, "sk-not-a-key")
    with pytest.raises(errors.ClientError) as bad_key:
        stranger.models.generate_content(model=GEMINI, contents="Hi")
    assert bad_key.value.code in (400, 401)
    _, _, poor = gateway
    pauper = client(gateway, poor)
    with pytest.raises(errors.ClientError) as poor_key:
        pauper.models.generate_content(model=GEMINI, contents="Hi")
    assert poor_key.value.code in (402, 403, 429)
    c = client(gateway)
    with pytest.raises(errors.ClientError) as unknown:
        c.models.generate_content(model="no-such-model", contents="Hi")
    assert unknown.value.code in (400, 404)
