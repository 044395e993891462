/** Languages of the API-integration guide (names are proper nouns, not translated). */
export const snippetLanguages = [
  { id: 'curl', label: 'cURL' },
  { id: 'python', label: 'Python' },
  { id: 'node', label: 'Node.js' },
  { id: 'go', label: 'Go' },
  { id: 'java', label: 'Java' },
] as const;
export type SnippetLanguage = (typeof snippetLanguages)[number]['id'];

export interface SnippetInput {
  /** The server's address without a trailing slash, e.g. https://gate.example.com. */
  baseUrl: string;
  /** The bearer key (`sk-…`) or a placeholder. */
  apiKey: string;
  model: string;
}

/** Sample code for POST /v1/chat/completions with a bearer key (spec 02 §1). */
export function chatSnippet(language: SnippetLanguage, { baseUrl, apiKey, model }: SnippetInput) {
  const url = `${baseUrl}/v1/chat/completions`;
  const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello!' }] }, null, 2);
  switch (language) {
    case 'curl':
      return [
        `curl ${url} \\`,
        `  -H "Content-Type: application/json" \\`,
        `  -H "Authorization: Bearer ${apiKey}" \\`,
        `  -d '${body.replace(/\n\s*/g, ' ')}'`,
      ].join('\n');
    case 'python':
      return [
        'from openai import OpenAI',
        '',
        `client = OpenAI(base_url="${baseUrl}/v1", api_key="${apiKey}")`,
        '',
        'completion = client.chat.completions.create(',
        `    model="${model}",`,
        '    messages=[{"role": "user", "content": "Hello!"}],',
        ')',
        'print(completion.choices[0].message.content)',
      ].join('\n');
    case 'node':
      return [
        "import OpenAI from 'openai';",
        '',
        `const client = new OpenAI({ baseURL: '${baseUrl}/v1', apiKey: '${apiKey}' });`,
        '',
        'const completion = await client.chat.completions.create({',
        `  model: '${model}',`,
        "  messages: [{ role: 'user', content: 'Hello!' }],",
        '});',
        'console.log(completion.choices[0].message.content);',
      ].join('\n');
    case 'go':
      return [
        'package main',
        '',
        'import (',
        '\t"fmt"',
        '\t"io"',
        '\t"net/http"',
        '\t"strings"',
        ')',
        '',
        'func main() {',
        `\tbody := strings.NewReader(\`${body.replace(/\n\s*/g, ' ')}\`)`,
        `\treq, _ := http.NewRequest("POST", "${url}", body)`,
        '\treq.Header.Set("Content-Type", "application/json")',
        `\treq.Header.Set("Authorization", "Bearer ${apiKey}")`,
        '\tresp, err := http.DefaultClient.Do(req)',
        '\tif err != nil {',
        '\t\tpanic(err)',
        '\t}',
        '\tdefer resp.Body.Close()',
        '\tout, _ := io.ReadAll(resp.Body)',
        '\tfmt.Println(string(out))',
        '}',
      ].join('\n');
    case 'java':
      return [
        'import java.net.URI;',
        'import java.net.http.HttpClient;',
        'import java.net.http.HttpRequest;',
        'import java.net.http.HttpResponse;',
        '',
        'public class Chat {',
        '    public static void main(String[] args) throws Exception {',
        `        String body = "${body.replace(/\n\s*/g, ' ').replace(/"/g, '\\"')}";`,
        '        HttpRequest request = HttpRequest.newBuilder()',
        `            .uri(URI.create("${url}"))`,
        '            .header("Content-Type", "application/json")',
        `            .header("Authorization", "Bearer ${apiKey}")`,
        '            .POST(HttpRequest.BodyPublishers.ofString(body))',
        '            .build();',
        '        HttpResponse<String> response = HttpClient.newHttpClient()',
        '            .send(request, HttpResponse.BodyHandlers.ofString());',
        '        System.out.println(response.body());',
        '    }',
        '}',
      ].join('\n');
  }
}

/** Where clients reach this server: the configured server address, else this page's origin. */
export function serverBaseUrl(serverAddress: string): string {
  const base = serverAddress.trim() || window.location.origin;
  return base.replace(/\/+$/, '');
}
