import { mergeConfig } from 'vitest/config';
import { packageProject } from '../../vitest.shared.ts';

export default mergeConfig(packageProject('aip-26'), {
  test: { setupFiles: ['test/support/isolated-cache-home.ts'] },
});
