export async function runIdle(_o: any): Promise<{ results: unknown; report: string }> { return { results: null, report: '' }; }
