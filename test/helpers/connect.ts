/** Connect-RPC test helpers. */
import { type Code, ConnectError } from '@connectrpc/connect';

/** The code and raw message a call failed with; throws when it did not fail. */
export async function rpcFailure(p: Promise<unknown>): Promise<{ code: Code; message: string }> {
  try {
    await p;
  } catch (err) {
    const e = ConnectError.from(err);
    return { code: e.code, message: e.rawMessage };
  }
  throw new Error('expected the call to fail');
}
