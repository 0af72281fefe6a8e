// examples/pizza-order.mjs: a multi-turn agent. It asks for what the order still lacks (INPUT_REQUIRED)
// and completes once it knows the size and the toppings. It keeps no state of its own: the task's
// history holds every message of the conversation.
import { dataPart } from "a2a-grpc-server";

const SIZES = ["small", "medium", "large"];
const TOPPINGS = ["cheese", "tomato", "mushrooms", "olives", "ham", "basil"];

export default {
  card: {
    name: "Pizza order",
    description: "Takes a pizza order, asking for what is missing.",
    skills: [
      {
        id: "order",
        name: "Order a pizza",
        description: "Size and toppings, over several turns.",
        tags: ["multi-turn"],
        examples: ["a large pizza", "mushrooms and olives"],
      },
    ],
  },

  async execute(ctx) {
    // Every user message so far: the task's history on a follow-up (it already holds this one), else this one.
    const said = (ctx.task ? ctx.task.history.filter((m) => m.role === ctx.message.role) : [ctx.message])
      .flatMap((m) => m.parts)
      .map((p) => (p.content.case === "text" ? p.content.value.toLowerCase() : ""))
      .join(" ");
    const size = SIZES.find((s) => said.includes(s));
    const toppings = TOPPINGS.filter((t) => said.includes(t));
    // The first question may be the first update: the task goes from SUBMITTED to INPUT_REQUIRED at once.
    if (size === undefined) return ctx.requireInput(`What size: ${SIZES.join(", ")}?`);
    if (toppings.length === 0) return ctx.requireInput(`A ${size} pizza. Which toppings? We have ${TOPPINGS.join(", ")}.`);
    await ctx.artifact({ name: "order", parts: [dataPart({ size, toppings })] });
    await ctx.complete(`Ordered: a ${size} pizza with ${toppings.join(" and ")}.`);
  },
};
