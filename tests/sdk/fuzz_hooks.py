"""Schemathesis hooks for the relay pass of test_openapi_fuzz.py (loaded through
SCHEMATHESIS_HOOKS=fuzz_hooks).

Tollgate's document types relay bodies as any JSON object, so a generated body almost never
names a model that has a channel and the relay answers 400 before any upstream is reached (and
a model without a channel is a 503 by spec). For this pass only, the relay operations get a
body schema whose `model` is one of the models the mock channels serve, with the fields each
format reads (messages, contents, input, prompt, stream, ...) loosely typed so the generator
still varies them, and the Gemini path parameter names a served model and method.
"""
import schemathesis

# Models the fuzz run's channels serve: an OpenAI-compatible mock, an Anthropic mock and a
# Gemini mock (test_openapi_fuzz.py creates them).
OPENAI_MODELS = ["gpt-4o-mini", "text-embedding-3-small", "whisper-1"]
CLAUDE_MODELS = ["claude-sonnet-4-20250514"]
GEMINI_MODELS = ["gemini-2.5-flash"]
MODELS = OPENAI_MODELS + CLAUDE_MODELS + GEMINI_MODELS
GEMINI_TARGETS = [f"{m}:{method}" for m in MODELS
                  for method in ("generateContent", "streamGenerateContent", "countTokens",
                                 "embedContent")]

TEXT = {"type": "string", "maxLength": 40}
CONTENT = {"anyOf": [
    TEXT,
    {"type": "array", "maxItems": 2, "items": {"type": "object", "properties": {
        "type": {"enum": ["text", "image_url", "input_text", "image", "tool_result"]},
        "text": TEXT}}},
]}
MESSAGES = {"type": "array", "minItems": 1, "maxItems": 3, "items": {
    "type": "object", "required": ["role", "content"],
    "properties": {"role": {"enum": ["system", "user", "assistant", "tool", "developer"]},
                   "content": CONTENT}}}
PARTS = {"type": "array", "minItems": 1, "maxItems": 2,
         "items": {"type": "object", "properties": {"text": TEXT}}}
FIELDS = {
    "stream": {"type": "boolean"},
    "max_tokens": {"type": "integer", "minimum": -1, "maximum": 100000},
    "temperature": {"type": "number"},
    "n": {"type": "integer", "minimum": -1, "maximum": 3},
    "messages": MESSAGES,
    "system": CONTENT,
    "input": {"anyOf": [TEXT, {"type": "array", "maxItems": 2, "items": TEXT}]},
    "prompt": TEXT,
    "query": TEXT,
    "documents": {"type": "array", "maxItems": 3, "items": TEXT},
    "contents": {"type": "array", "minItems": 1, "maxItems": 2,
                 "items": {"type": "object", "properties": {"role": {"enum": ["user", "model"]},
                                                            "parts": PARTS}}},
    "content": {"type": "object", "properties": {"parts": PARTS}},
    "voice": TEXT,
    "size": {"enum": ["1024x1024", "256x256", "x"]},
}


def typed_body(schema):
    properties = {"model": {"enum": MODELS}, **FIELDS}
    return {"content": {"application/json": {"schema": {
        "type": "object", "required": ["model"], "properties": properties}}}}


@schemathesis.hook
def before_load_schema(context, raw_schema):
    for path, operations in raw_schema.get("paths", {}).items():
        if not path.startswith(("/v1/", "/v1beta/")):
            continue
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            body = operation.get("requestBody", {}).get("content", {})
            if "application/json" in body:
                operation["requestBody"] = typed_body(body)
            for parameter in operation.get("parameters", []):
                if parameter.get("in") != "path":
                    continue
                if parameter.get("name") == "target":
                    parameter["schema"] = {"enum": GEMINI_TARGETS}
                elif parameter.get("name") == "model":
                    parameter["schema"] = {"enum": MODELS + ["no-such-model"]}
