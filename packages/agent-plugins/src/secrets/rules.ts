/**
 * Known credential formats, one row a vendor's published token shape. Kept small on purpose:
 * a reviewer reads every row, and every row has a test with a token of that shape
 * (test/conformance/secrets-never-packaged.test.ts).
 *
 * Why a table of our own rather than a maintained rule set as a dependency: secretlint's
 * preset (@secretlint/secretlint-rule-preset-recommend, MIT) is ESM only and asynchronous,
 * while the entry checks here are synchronous and this package also ships CommonJS; gitleaks'
 * default config (MIT) is Go RE2 with inline `(?i)` flags that Node 20 does not parse. The
 * shapes below are the vendors' documented prefixes and lengths; the coverage was compared
 * with secretlint-rule-preset-recommend 13.0.7 and gitleaks' config/gitleaks.toml (v8), and
 * no pattern text was copied from either. A new vendor is one more row and one more test.
 *
 * `prefix` is how many leading characters of a match are the vendor's public marker
 * (`ghp_`, `AKIA`): the most a finding may show. Nothing past it is ever shown.
 */
export interface SecretRule {
  id: string;
  /** What the value looks like, for the finding's message. */
  title: string;
  /** Global, so that every occurrence in a value is tried. */
  pattern: RegExp;
  /** Characters of a match that are the public marker and may be shown. */
  prefix: number;
}

// A token starts and ends at a boundary: no letter, digit or "_" right before or after, so a
// marker inside a longer word ("desk-…", "mask_…") is not a token.
const B = '(?<![A-Za-z0-9_])';
const E = '(?![A-Za-z0-9_])';

const rule = (id: string, title: string, body: string, prefix: number, flags = 'g'): SecretRule => ({
  id,
  title,
  pattern: new RegExp(`${B}${body}${E}`, flags),
  prefix,
});

export const SECRET_RULES: readonly SecretRule[] = Object.freeze([
  // GitHub: classic tokens are a prefix and 36 base62 characters; GitHub reserves up to 255.
  rule('github-token', 'a GitHub token', '(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}', 4),
  rule(
    'github-fine-grained-token',
    'a GitHub fine-grained personal access token',
    'github_pat_[A-Za-z0-9_]{50,244}',
    11,
  ),
  // Anthropic before OpenAI: both start with "sk-".
  rule('anthropic-api-key', 'an Anthropic API key', 'sk-ant-[a-z]{2,8}[0-9]{2}-[A-Za-z0-9_-]{32,}', 7),
  rule('openai-project-key', 'an OpenAI API key', 'sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{32,}', 3),
  // Legacy OpenAI keys hold "T3BlbkFJ" (base64 of "OpenAI") at their middle.
  rule('openai-legacy-key', 'an OpenAI API key', 'sk-[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}', 3),
  rule('aws-access-key-id', 'an AWS access key id', '(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}', 4),
  rule('slack-token', 'a Slack token', '(?:xox[abposr]|xapp)-[0-9A-Za-z]{1,40}(?:-[0-9A-Za-z]{1,64}){1,5}', 5),
  rule(
    'slack-webhook',
    'a Slack incoming webhook URL',
    'hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{20,}',
    16,
  ),
  rule('stripe-key', 'a Stripe secret or restricted key', '(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,247}', 8),
  rule('google-api-key', 'a Google API key', 'AIza[0-9A-Za-z_-]{35}', 4),
  rule('google-oauth-secret', 'a Google OAuth client secret', 'GOCSPX-[A-Za-z0-9_-]{28}', 7),
  rule('gitlab-token', 'a GitLab personal access token', 'glpat-[A-Za-z0-9_-]{20,}', 6),
  rule('npm-token', 'an npm access token', 'npm_[A-Za-z0-9]{36}', 4),
  rule('huggingface-token', 'a Hugging Face token', 'hf_[A-Za-z0-9]{34,}', 3),
  rule('sendgrid-api-key', 'a SendGrid API key', 'SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}', 3),
  rule('pypi-token', 'a PyPI API token', 'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}', 5),
  rule('docker-pat', 'a Docker Hub personal access token', 'dckr_pat_[A-Za-z0-9_-]{27,}', 9),
  // A JSON Web Token: a base64url JSON header ("{\"" is "eyJ"), a payload and a signature.
  rule('jwt', 'a JSON Web Token', 'eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*', 3),
  // PEM private keys of every kind (RSA, EC, OPENSSH, ENCRYPTED, PGP … BLOCK).
  {
    id: 'private-key',
    title: 'a private key',
    pattern: /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----/g,
    prefix: 0,
  },
]);
