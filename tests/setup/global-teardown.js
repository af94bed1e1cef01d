module.exports = require("./private-tmpdir").tearDown;
