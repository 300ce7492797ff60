// Loader hook for node20-shim.mjs: moves `globSync` out of `import {…} from "fs"`.
const shim = new URL('./node20-glob.mjs', import.meta.url).href;

export async function load(url, context, nextLoad) {
  const res = await nextLoad(url, context);
  if (!url.includes('/@modelcontextprotocol/conformance/') || res.format !== 'module') return res;
  let src = typeof res.source === 'string' ? res.source : Buffer.from(res.source).toString('utf8');
  src = src.replace(/import\s*\{([^}]*)\}\s*from\s*["'](?:node:)?fs["'];?/g, (whole, specs) => {
    const parts = specs.split(',').map((s) => s.trim()).filter(Boolean);
    const glob = parts.find((p) => /^globSync(\s+as\s+\w+)?$/.test(p));
    if (!glob) return whole;
    const rest = parts.filter((p) => p !== glob);
    return `import{${glob}}from${JSON.stringify(shim)};` + (rest.length ? `import{${rest.join(',')}}from"fs";` : '');
  });
  return { ...res, source: src };
}
