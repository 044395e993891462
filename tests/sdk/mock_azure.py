"""A mock Azure OpenAI resource for the SDK suite: chat completions at a deployment's URL with the
api-version query parameter and the key in the `api-key` header, as Azure's REST reference
(inference 2024-10-21, https://learn.microsoft.com/azure/ai-foundry/openai/reference) documents;
whole answers and SSE streams whose first chunk carries only `prompt_filter_results`, with a
usage chunk when asked for."""

import json
from urllib.parse import parse_qs, urlparse

from conftest import MockProvider

KEY = "azure-sdk-key"
DEPLOYMENT = "my-gpt4o"
API_VERSION = "2024-10-21"


class MockAzure(MockProvider):
    """Answers `POST /openai/deployments/{DEPLOYMENT}/chat/completions?api-version=…`; any other
    path, version or key is refused as Azure refuses it."""

    seen = []

    def do_POST(self):
        url = urlparse(self.path)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.headers.get("api-key") != KEY:
            return self._json({"error": {"code": "401", "message": "Access denied due to invalid "
                                         "subscription key or wrong API endpoint."}}, 401)
        if parse_qs(url.query).get("api-version") != [API_VERSION]:
            return self._json({"error": {"code": "404", "message": "Resource not found"}}, 404)
        if url.path != f"/openai/deployments/{DEPLOYMENT}/chat/completions":
            return self._json({"error": {"code": "DeploymentNotFound",
                                         "message": "The API deployment for this resource does not exist."}}, 404)
        MockAzure.seen.append((url.path, body))
        usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        if not body.get("stream"):
            return self._json({"id": "chatcmpl-az1", "object": "chat.completion", "created": 1,
                               "model": "gpt-4o-2024-08-06",
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": "Hello"}}],
                               "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = {"id": "", "object": "", "created": 0, "model": "", "choices": [],
                 "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}]}
        self._chunk(f"data: {json.dumps(chunk)}\n\n")
        for text, finish in [("Hel", None), ("lo", "stop")]:
            chunk = {"id": "chatcmpl-az2", "object": "chat.completion.chunk", "created": 1,
                     "model": "gpt-4o-2024-08-06",
                     "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
            self._chunk(f"data: {json.dumps(chunk)}\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk = {"id": "chatcmpl-az2", "object": "chat.completion.chunk", "created": 1,
                     "model": "gpt-4o-2024-08-06", "choices": [], "usage": usage}
            self._chunk(f"data: {json.dumps(chunk)}\n\n")
        self._chunk("data: [DONE]\n\n")
        self._chunk("")
