#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The module's rooms as docs/hacking.md draws them, and two checks.

A file calls another when one of its functions names one of the other's
non-static ftv_*() functions followed by "(" (calls through a pointer,
which the receive and transmit paths' registered steps are, do not
count). The files that call each other, directly or through one
another, are the loop (a strongly connected component); the script
prints it, the files below it and the entry points, and the pairs of
files that call each other.

  --max-loop N     fail if the largest loop has more than N files
  --max-lines N    fail if a function in the C files given with --lines
                   has more than N lines from its opening line to its
                   closing brace
  --lines DIR...   the directories whose *.c files --max-lines checks
"""

import argparse
import collections
import glob
import os
import re
import sys

DEF = re.compile(r'^(?!static\b)[A-Za-z_][^\n;{}()]*?\b(ftv_\w+)\s*\([^;{]*\)\s*\{',
                 re.M)
CALL = re.compile(r'\b(ftv_\w+)\s*\(')
FUNC_START = re.compile(r'^[A-Za-z_][^\n;]*\)\s*$|^[A-Za-z_][^\n;]*\)\s*\{\s*$')


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'),
                  text, flags=re.S)
    return re.sub(r'//[^\n]*', '', text)


def graph(directory):
    files = sorted(f for f in glob.glob(os.path.join(directory, '*.c'))
                   if not f.endswith('.mod.c'))
    text = {f: strip_comments(open(f).read()) for f in files}
    owner = {}
    for f in files:
        for m in DEF.finditer(text[f]):
            owner.setdefault(m.group(1), f)
    edges = collections.defaultdict(set)
    names = collections.defaultdict(set)
    for f in files:
        for name in set(CALL.findall(text[f])):
            g = owner.get(name)
            if g and g != f:
                edges[f].add(g)
                names[(f, g)].add(name)
    return files, edges, names


def loops(files, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in files:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def long_functions(directories, limit):
    """Functions whose body, opening line to closing brace, is too long."""
    found = []
    for d in directories:
        for f in sorted(glob.glob(os.path.join(d, '**', '*.c'), recursive=True)):
            lines = open(f).read().split('\n')
            start = None
            for n, line in enumerate(lines):
                if start is None and line.startswith('{') and n > 0:
                    start = n - 1
                    while start > 0 and not re.match(r'[A-Za-z_]', lines[start]):
                        start -= 1
                elif start is not None and line.startswith('}'):
                    length = n - start + 1
                    if length > limit:
                        found.append((f, start + 1, length, lines[start].strip()))
                    start = None
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('directory', nargs='?', default='module')
    ap.add_argument('--max-loop', type=int)
    ap.add_argument('--max-lines', type=int)
    ap.add_argument('--lines', nargs='*', default=[])
    ap.add_argument('--quiet', action='store_true')
    args = ap.parse_args()

    files, edges, names = graph(args.directory)
    comps = loops(files, edges)
    base = os.path.basename
    loop = max(comps, key=len)
    in_loop = set(loop) if len(loop) > 1 else set()
    callers = collections.defaultdict(set)
    for a in files:
        for b in edges[a]:
            callers[b].add(a)
    reach = set(in_loop)
    grew = True
    while grew:
        grew = False
        for a in files:
            if a not in reach and edges[a] & reach:
                reach.add(a)
                grew = True
    above = sorted(f for f in reach - in_loop)
    below = sorted(f for f in files if f not in reach)
    rc = 0
    if not args.quiet:
        print('loop (%d files): %s' % (len(in_loop),
                                       ' '.join(base(f) for f in sorted(in_loop))))
        print('calling into it: %s' % ' '.join(base(f) for f in above))
        print('below it: %s' % ' '.join(base(f) for f in below))
        for a in files:
            for b in files:
                if a < b and b in edges[a] and a in edges[b]:
                    print('  %s <-> %s: %s / %s' % (
                        base(a), base(b), ', '.join(sorted(names[(a, b)])),
                        ', '.join(sorted(names[(b, a)]))))
    if args.max_loop is not None and len(in_loop) > args.max_loop:
        print('callgraph: the loop has %d files, more than %d: say why in '
              'docs/hacking.md and raise the limit, or cut a call'
              % (len(in_loop), args.max_loop))
        rc = 1
    if args.max_lines is not None:
        for f, line, length, head in long_functions(args.lines, args.max_lines):
            print('callgraph: %s:%d: %d lines (more than %d): %s'
                  % (f, line, length, args.max_lines, head))
            rc = 1
    return rc


if __name__ == '__main__':
    sys.exit(main())
