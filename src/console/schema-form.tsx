/**
 * A form built from an object JSON Schema (an agent's input_schema, a tool's parameters): a
 * labelled input per property (text, number, checkbox, select for an enum, a list one a line,
 * checkboxes for a list of enum values, a JSON text area for anything else), its description as
 * help text (aria-describedby), required fields marked, defaults filled in, bounds, lengths and
 * pattern on the inputs. Submitting checks every field first (schema-form-model.ts) and shows
 * what does not fit next to it; the value is sent only when all fit. The service's refusal (its
 * 400 message) is the final word: shown under the form, and next to the field it names.
 */
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import {
  buildValue,
  fieldOfMessage,
  fieldsOf,
  initialValues,
  type Errors,
  type Field,
  type FieldValue,
  type ObjectSchema,
  type Values,
} from './schema-form-model.js';
import { messageOf } from './session.js';

export interface SchemaFormProps {
  schema: ObjectSchema | undefined;
  /** Prefix of the inputs' ids (unique on the page). */
  idPrefix: string;
  /** The form's accessible name. */
  label: string;
  submitLabel: string;
  busyLabel: string;
  /** Sends the value; a thrown error's message is the service's answer, shown under the form. */
  onSubmit: (value: Record<string, unknown>) => Promise<void>;
  /** More inputs after the schema's (fields the API takes beside the value, e.g. a session id). */
  children?: ComponentChildren;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const optionText = (o: unknown): string => (typeof o === 'string' ? o : JSON.stringify(o));

/** The ids of one field's input, help text and error. */
function idsOf(prefix: string, f: Field) {
  const base = `${prefix}-${f.name.replace(/[^\w-]/g, '_')}`;
  return { input: base, help: `${base}-help`, error: `${base}-error` };
}

/** The hint added to a field's description: how a list or JSON is typed. */
function hintOf(f: Field): string | undefined {
  if (f.kind === 'list') return f.itemType === 'string' ? 'One per line.' : 'One per line, or separated by commas.';
  if (f.kind === 'json') return `JSON${f.jsonType ? ` (${f.jsonType})` : ''}.`;
  return undefined;
}

/** The help text of a field: its description, then the hint (a full stop between them when the description has none). */
function helpOf(f: Field): string {
  const d = f.description?.trim() ?? '';
  const hint = hintOf(f);
  if (!hint) return d;
  return d ? `${d}${/[.!?:)]$/.test(d) ? '' : '.'} ${hint}` : hint;
}

interface InputProps {
  f: Field;
  ids: ReturnType<typeof idsOf>;
  value: FieldValue;
  describedBy?: string;
  invalid: boolean;
  onValue: (v: FieldValue) => void;
}

function Required({ f }: { f: Field }) {
  return f.required ? (
    <span class="req" aria-hidden="true">
      *
    </span>
  ) : null;
}

/** A list of enum values: a checkbox each, in a group named by the field. */
function Choices({ f, ids, value, describedBy, invalid, onValue }: InputProps) {
  const picked = value as string[];
  const toggle = (i: string, on: boolean) => onValue(on ? [...picked, i].sort((a, b) => Number(a) - Number(b)) : picked.filter((x) => x !== i));
  return (
    <fieldset class="choices" aria-describedby={describedBy} aria-invalid={invalid || undefined}>
      <legend>
        {f.label}
        <Required f={f} />
      </legend>
      {f.options!.map((o, i) => {
        const id = `${ids.input}-${i}`;
        return (
          <div class="check" key={id}>
            <input id={id} type="checkbox" name={f.name} checked={picked.includes(String(i))} onChange={(e) => toggle(String(i), e.currentTarget.checked)} />
            <label for={id}>{optionText(o)}</label>
          </div>
        );
      })}
    </fieldset>
  );
}

function FieldInput({ f, ids, value, describedBy, invalid, onValue }: InputProps) {
  const p = f.schema;
  const common = {
    id: ids.input,
    name: f.name,
    'aria-describedby': describedBy,
    'aria-invalid': invalid || undefined,
    required: f.required,
  };
  const text = (e: Event) => onValue((e.currentTarget as HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement).value);
  if (f.kind === 'checkbox')
    return (
      <div class="check">
        <input {...common} required={false} type="checkbox" checked={value === true} onChange={(e) => onValue(e.currentTarget.checked)} />
        <label for={ids.input}>{f.label}</label>
        <Required f={f} />
      </div>
    );
  if (f.kind === 'choices') return <Choices f={f} ids={ids} value={value} describedBy={describedBy} invalid={invalid} onValue={onValue} />;
  let input;
  if (f.kind === 'select' || f.kind === 'tristate') {
    const options =
      f.kind === 'select'
        ? f.options!.map((o, i) => [String(i), optionText(o)])
        : [
            ['true', 'true'],
            ['false', 'false'],
          ];
    const keepEmpty = !(f.required && value !== '');
    input = (
      <select {...common} value={value as string} onChange={text}>
        {keepEmpty ? <option value="">{f.required ? 'Choose…' : '(not set)'}</option> : null}
        {options.map(([v, t]) => (
          <option key={v} value={v}>
            {t}
          </option>
        ))}
      </select>
    );
  } else if (f.kind === 'number' || f.kind === 'integer') {
    input = (
      <input
        {...common}
        type="number"
        inputMode={f.kind === 'integer' ? 'numeric' : 'decimal'}
        step={f.kind === 'integer' ? 1 : 'any'}
        min={num(p.minimum)}
        max={num(p.maximum)}
        value={value as string}
        onInput={text}
      />
    );
  } else if (f.kind === 'text') {
    input = (
      <input
        {...common}
        type="text"
        minLength={num(p.minLength)}
        maxLength={num(p.maxLength)}
        pattern={str(p.pattern)}
        value={value as string}
        onInput={text}
      />
    );
  } else {
    const rows = f.kind === 'textarea' ? 6 : f.kind === 'json' ? 5 : 4;
    const mono = f.kind === 'json' || /code|script/.test(f.name);
    input = (
      <textarea
        {...common}
        class={mono ? 'mono' : undefined}
        rows={rows}
        spellcheck={f.kind === 'textarea' ? undefined : false}
        minLength={f.kind === 'textarea' ? num(p.minLength) : undefined}
        maxLength={f.kind === 'textarea' ? num(p.maxLength) : undefined}
        value={value as string}
        onInput={text}
      />
    );
  }
  return (
    <>
      {/* The mark is beside the label, not in it: the input's name is the property's name alone. */}
      <div class="label-row">
        <label for={ids.input}>{f.label}</label>
        <Required f={f} />
      </div>
      {input}
    </>
  );
}

export function SchemaForm({ schema, idPrefix, label, submitLabel, busyLabel, onSubmit, children }: SchemaFormProps) {
  const fields = useMemo(() => fieldsOf(schema), [schema]);
  const [values, setValues] = useState<Values>(() => initialValues(fields));
  const [errors, setErrors] = useState<Errors>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    const built = buildValue(fields, values);
    const bad = fields.filter((f) => built.errors[f.name]);
    setErrors(built.errors);
    if (bad.length) {
      setError(`${bad.length === 1 ? 'One field does' : `${bad.length} fields do`} not fit: ${bad.map((f) => f.label).join(', ')}.`);
      document.getElementById(idsOf(idPrefix, bad[0]!).input + (bad[0]!.kind === 'choices' ? '-0' : ''))?.focus();
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await onSubmit(built.value);
    } catch (err) {
      const message = messageOf(err);
      setError(message);
      const named = fieldOfMessage(message, fields);
      if (named) setErrors({ [named]: message });
    } finally {
      setBusy(false);
    }
  };
  const reset = () => {
    setValues(initialValues(fields));
    setErrors({});
    setError(undefined);
  };

  return (
    <form class="form schema-form" aria-label={label} noValidate onSubmit={submit}>
      {fields.length === 0 ? <p class="muted">This takes no input.</p> : null}
      {fields.some((f) => f.required) ? (
        <p class="muted legend-note">
          Fields marked <span aria-hidden="true">*</span> are required.
        </p>
      ) : null}
      {fields.map((f) => {
        const ids = idsOf(idPrefix, f);
        const help = helpOf(f);
        const fieldError = errors[f.name];
        const describedBy = [help ? ids.help : '', fieldError ? ids.error : ''].filter(Boolean).join(' ') || undefined;
        return (
          <div class={`field k-${f.kind}`} key={f.name} data-field={f.name}>
            <FieldInput
              f={f}
              ids={ids}
              value={values[f.name] ?? ''}
              describedBy={describedBy}
              invalid={!!fieldError}
              onValue={(v) => {
                setValues((old) => ({ ...old, [f.name]: v }));
                if (errors[f.name]) setErrors((old) => ({ ...old, [f.name]: '' }));
              }}
            />
            {help ? (
              <p class="help" id={ids.help}>
                {help}
              </p>
            ) : null}
            {fieldError ? (
              <p class="error field-error" id={ids.error}>
                {fieldError}
              </p>
            ) : null}
          </div>
        );
      })}
      {children}
      <p class="error" role="alert" data-testid="form-error">
        {error ?? ''}
      </p>
      <div class="buttons">
        <button type="submit" class="primary" disabled={busy}>
          {busy ? busyLabel : submitLabel}
        </button>
        <button type="button" onClick={reset} disabled={busy}>
          Reset
        </button>
      </div>
    </form>
  );
}
