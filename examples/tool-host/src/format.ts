import type { RegistrationProblem } from './errors.js';
import type { RegisteredTool } from './registry.js';

/** A registered tool for people: one line per source, github sources with the commit they were registered at. */
export function describeTool(tool: RegisteredTool, registryFile: string): string {
  const lines = [`registered ${tool.name} in ${registryFile}`];
  for (const source of tool.sources) {
    const github =
      source.kind === 'github' ? `  ${source.repo}@${source.ref} (${source.refKind}) → ${source.commit}` : '';
    lines.push(
      `  ${source.source}  ${source.kind}  ${source.files === 1 ? '1 file' : `${source.files} files`}${github}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A refusal's problems for people: pointer, code and reason, then the message. */
export function describeProblems(problems: readonly RegistrationProblem[]): string {
  return problems
    .map((p) => `  ${p.pointer || '/'}  ${p.code}${p.reason ? ` (${p.reason})` : ''}  ${p.message}\n`)
    .join('');
}
