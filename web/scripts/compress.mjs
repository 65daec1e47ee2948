// Pre-compresses the built files (gzip and brotli, best level) next to the originals; the
// Spin component embeds all three and picks one by Accept-Encoding.
import { readdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync, brotliCompressSync, constants } from 'node:zlib';

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

for (const file of walk('dist')) {
  if (file.endsWith('.gz') || file.endsWith('.br')) continue;
  const data = readFileSync(file);
  const gz = gzipSync(data, { level: 9 });
  const br = brotliCompressSync(data, {
    params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: data.length },
  });
  if (gz.length < data.length) writeFileSync(file + '.gz', gz);
  if (br.length < data.length) writeFileSync(file + '.br', br);
}
