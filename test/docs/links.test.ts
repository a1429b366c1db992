/**
 * Every relative link in the README, the changelog, docs/ and the packages' READMEs resolves: to a
 * file or folder of the repository, and, with a #fragment, to a heading of the file it names.
 * External links are left alone (the machine has no network).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function markdownFiles(): string[] {
  const files = ['README.md', 'CHANGELOG.md'];
  for (const dir of ['docs', 'packages']) {
    const walk = (relative: string): void => {
      for (const entry of readdirSync(path.join(ROOT, relative), { withFileTypes: true })) {
        const child = path.join(relative, entry.name);
        if (entry.isDirectory() && entry.name !== 'node_modules') walk(child);
        else if (entry.name.endsWith('.md')) files.push(child);
      }
    };
    if (existsSync(path.join(ROOT, dir))) walk(dir);
  }
  return files.filter((file) => existsSync(path.join(ROOT, file)));
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  const anchors = new Set<string>();
  for (const match of text.matchAll(/^#{1,6} (.+)$/gm)) anchors.add(anchorOf(match[1] ?? ''));
  return anchors;
}

/** The links of a Markdown file, outside code blocks and inline code. */
function linksOf(file: string): string[] {
  const text = readFileSync(path.join(ROOT, file), 'utf8').replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] ?? '');
}

describe('documentation links', () => {
  const files = markdownFiles();

  it('finds the README, the changelog and the guides', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CHANGELOG.md', path.join('docs', 'deploying.md')]));
  });

  it.each(files)('every relative link in %s resolves', (file) => {
    const broken: string[] = [];
    for (const link of linksOf(file)) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [target = '', fragment] = link.split('#');
      const resolved = target === '' ? path.join(ROOT, file) : path.resolve(path.dirname(path.join(ROOT, file)), decodeURIComponent(target));
      if (!existsSync(resolved)) {
        broken.push(`${link}: no such file`);
        continue;
      }
      if (fragment && statSync(resolved).isFile() && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) broken.push(`${link}: no such heading`);
    }
    expect(broken).toEqual([]);
  });
});
