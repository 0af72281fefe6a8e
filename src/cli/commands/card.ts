import { toJson } from "@bufbuild/protobuf";
import { AgentCardSchema } from "../../../gen/es/lf/a2a/v1/a2a_pb.js";
import { stringOption, type Command } from "../command.js";
import { DEFAULT_CARD_URL, fetchCard, httpDispatcher } from "../connection.js";
import { renderCard } from "../render.js";

export const cardCommand: Command = {
  name: "card",
  summary: "show the agent card (--extended: the authenticated card, over the chosen binding)",
  help: `Usage: a2a card [--card URL] [--extended]

Reads the public agent card over HTTP from --card (or A2A_CARD_URL; default
${DEFAULT_CARD_URL}).
  --extended   ask the server for its extended card instead (GetExtendedAgentCard over --binding)`,
  options: { extended: { type: "boolean" } },
  async run(ctx) {
    let card: Record<string, unknown>;
    if (ctx.values.extended) {
      const { client, tenant } = await ctx.connect();
      card = toJson(AgentCardSchema, await client.unary("getExtendedAgentCard", { tenant })) as Record<string, unknown>;
    } else {
      card = await fetchCard(
        stringOption(ctx.values, "card") ?? ctx.connection.card ?? DEFAULT_CARD_URL,
        ctx.connection.timeoutMs,
        httpDispatcher(ctx.connection),
      );
    }
    if (ctx.out.json) return ctx.out.data(card);
    renderCard(ctx.out, card);
  },
};
