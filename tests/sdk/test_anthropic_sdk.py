"""The official `anthropic` Python SDK against Tollgate's /v1/messages, unchanged: a Claude
channel (pass-through) and an OpenAI channel (converted), whole and streamed, sync and async,
and the SDK's exception classes for Tollgate's Anthropic-shaped errors."""

import asyncio

import anthropic
import pytest

CLAUDE = "claude-sonnet-4-20250514"
HI = [{"role": "user", "content": "Hi"}]

# The SDK warns that the dated model name is deprecated; irrelevant to the gateway.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def client(gateway, key=None):
    base, good, _ = gateway
    return anthropic.Anthropic(base_url=base, api_key=key or good, max_retries=0)


@pytest.mark.parametrize("model", [CLAUDE, "gpt-4o-mini"])
def test_messages_create(gateway, model):
    message = client(gateway).messages.create(model=model, max_tokens=64, messages=HI)
    assert message.type == "message"
    assert message.role == "assistant"
    assert message.content[0].type == "text"
    assert message.content[0].text == "Hello"
    assert message.stop_reason == "end_turn"
    assert message.usage.input_tokens == 5
    assert message.usage.output_tokens == 2


@pytest.mark.parametrize("model", [CLAUDE, "gpt-4o-mini"])
def test_messages_stream(gateway, model):
    with client(gateway).messages.stream(model=model, max_tokens=64, messages=HI) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "Hello"
    assert final.content[0].text == "Hello"
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens == 2


def test_raw_stream_events(gateway):
    events = list(client(gateway).messages.create(
        model="gpt-4o-mini", max_tokens=64, messages=HI, stream=True))
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start"
    assert kinds[-2:] == ["message_delta", "message_stop"]
    assert "content_block_delta" in kinds


def test_async_messages(gateway):
    base, key, _ = gateway

    async def run():
        async with anthropic.AsyncAnthropic(base_url=base, api_key=key, max_retries=0) as c:
            return await c.messages.create(model=CLAUDE, max_tokens=64, messages=HI)

    assert asyncio.run(run()).content[0].text == "Hello"


def test_errors_raise_the_sdk_exceptions(gateway):
    with pytest.raises(anthropic.AuthenticationError) as bad_key:
        client(gateway, "sk-not-a-key").messages.create(model=CLAUDE, max_tokens=64, messages=HI)
    assert bad_key.value.body["error"]["type"] == "authentication_error"
    _, _, poor = gateway
    with pytest.raises(anthropic.PermissionDeniedError):
        client(gateway, poor).messages.create(model=CLAUDE, max_tokens=64, messages=HI)
    with pytest.raises(anthropic.BadRequestError):
        client(gateway).messages.create(model="no-such-model", max_tokens=64, messages=HI)


def test_count_tokens(gateway):
    # A Claude channel counts with Claude's tokenizer (the mock says 13); a model on an OpenAI
    # channel is counted by Tollgate: "Hi" is 1 token, + 3 for the message + 3 for the reply.
    c = client(gateway)
    assert c.messages.count_tokens(model=CLAUDE, messages=HI).input_tokens == 13
    assert c.messages.count_tokens(model="gpt-4o-mini", messages=HI).input_tokens == 7
