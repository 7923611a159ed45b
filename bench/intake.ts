export async function runIntake(_o: any): Promise<{ results: unknown; report: string }> { return { results: null, report: '' }; }
